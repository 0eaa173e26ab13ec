/// Least-recently-used bookkeeping shared by the memory cache and the disk cache's index.
/// A doubly linked list over an array of nodes plus a dictionary from key to node slot: O(1)
/// lookup, move-to-front, insert and eviction, with no per-entry class allocation.
struct LRUList<Value> {
    struct Node {
        var key: String
        var value: Value?
        var cost: Int
        var newer: Int   // towards the head (most recent); -1 = none
        var older: Int   // towards the tail (least recent); -1 = none
    }

    var nodes: [Node] = []
    var freeSlots: [Int] = []
    var index: [String: Int] = [:]
    var head = -1   // most recently used
    var tail = -1   // least recently used
    var totalCost = 0
    var hits = 0, misses = 0, evictions = 0

    var count: Int { index.count }

    /// The least recently used entry's key, or nil when empty.
    var leastRecentKey: String? { tail >= 0 ? nodes[tail].key : nil }

    func peek(_ key: String) -> Value? { index[key].flatMap { nodes[$0].value } }

    mutating func touch(_ key: String) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToHead(slot)
        return nodes[slot].value
    }

    mutating func insert(_ key: String, _ value: Value, cost: Int) {
        if let slot = index[key] {
            totalCost += cost - nodes[slot].cost
            nodes[slot].value = value
            nodes[slot].cost = cost
            moveToHead(slot)
            return
        }
        let node = Node(key: key, value: value, cost: cost, newer: -1, older: head)
        let slot: Int
        if let free = freeSlots.popLast() { nodes[free] = node; slot = free } else { nodes.append(node); slot = nodes.count - 1 }
        if head >= 0 { nodes[head].newer = slot }
        head = slot
        if tail < 0 { tail = slot }
        index[key] = slot
        totalCost += cost
    }

    /// Removes the least recently used entry; false when empty.
    mutating func removeLeastRecent() -> Bool {
        guard tail >= 0 else { return false }
        remove(slot: tail)
        return true
    }

    /// Removes `key`'s entry and returns its cost, or nil when absent.
    @discardableResult
    mutating func remove(_ key: String) -> Int? {
        guard let slot = index[key] else { return nil }
        let cost = nodes[slot].cost
        remove(slot: slot)
        return cost
    }

    private mutating func remove(slot: Int) {
        unlink(slot)
        index[nodes[slot].key] = nil
        totalCost -= nodes[slot].cost
        nodes[slot].value = nil
        nodes[slot].key = ""
        freeSlots.append(slot)
    }

    private mutating func moveToHead(_ slot: Int) {
        guard head != slot else { return }
        unlink(slot)
        nodes[slot].older = head
        nodes[slot].newer = -1
        if head >= 0 { nodes[head].newer = slot }
        head = slot
        if tail < 0 { tail = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let newer = nodes[slot].newer, older = nodes[slot].older
        if newer >= 0 { nodes[newer].older = older } else { head = older }
        if older >= 0 { nodes[older].newer = newer } else { tail = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }
}
