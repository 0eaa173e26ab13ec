/// A first-in first-out queue over an array with a moving head: O(1) amortised push and pop.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }

    mutating func push(_ element: Element) { items.append(element) }

    /// Every element, oldest first.
    var elements: ArraySlice<Element> { items[head...] }

    /// The element `pop` would take, without taking it.
    var first: Element? { head < items.count ? items[head] : nil }

    /// Takes the newest element (the end) instead of the oldest.
    mutating func popLast() -> Element? {
        guard head < items.count else { return nil }
        let element = items.removeLast()
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return element
    }

    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
extension FIFO: Sendable where Element: Sendable {}
