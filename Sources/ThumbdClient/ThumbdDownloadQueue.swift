/// Which thumbnail downloads go to URLSession and when, as a value: events in (a download asked
/// for, left, finished; a connection opened), effects out (send, cancel, open a connection), for
/// `ThumbdImageManager` to perform.
///
/// Two rules live here:
/// - **At most `limit` downloads at once, in the order they were asked for** (the session's
///   connections a host, 6 by default), the rest waiting here, so a download whose cell scrolled
///   away before its turn is dropped without a word to the server, and the next to go is the one
///   that became visible first (through URLSession's own queue on Linux, cells that became
///   visible later reached the server before cells waiting since the start).
/// - **A connection is opened with a no-op request before a download needs it**
///   (`openConnection`: `OPTIONS /`, RFC 9110 §9.3.7), when FoundationNetworking (libcurl) is the
///   transport. There, a socket's first transfer keeps the Dispatch write source of its connect
///   (`URLSession._MultiHandle` cancels a socket's sources only when libcurl removes the socket,
///   not when it asks for reads alone), which fires, the socket being writable, for as long as
///   the transfer waits: a thumbnail rendering for 300 ms spins the session's queue for 300 ms.
///   The first transfer over a connection opened this way is the no-op, answered at once; the
///   downloads after it reuse the connection (libcurl takes an idle connection of the host before
///   it opens one). One no-op at a time, sent while every connection carries a download, so it
///   cannot reuse one: no-ops sent together go one after another over one connection. Measured
///   in docs/performance.md ("ThumbdClient against scroll.py").
///
/// The connections it counts are those it believes open: opened by a no-op (unless a download
/// ended meanwhile, whose connection the no-op may have been given) or a download, kept after a
/// download (not after a cancel, which closes its connection, a network error or
/// `Connection: close`); one counted that is not there costs a download on a fresh connection,
/// one there and not counted a no-op.
struct ThumbdDownloadQueue: Equatable {
    /// What the driver does.
    enum Effect: Equatable {
        /// Starts the download (its URLSessionTask).
        case send(Int)
        /// Cancels the download under way (its URLSessionTask: its connection is closed, and the
        /// server sees its client leave).
        case cancel(Int)
        /// Sends a no-op request (`OPTIONS`) that opens a connection, then reports `.opened`.
        case openConnection
    }

    /// What happened.
    enum Event: Equatable {
        /// A download is wanted (a request for a URL not already downloading).
        case asked(Int)
        /// Every request for it left (its cells scrolled away).
        case left(Int)
        /// It ended; `keptConnection` false after a network error or `Connection: close`.
        case finished(Int, keptConnection: Bool)
        /// A no-op request ended: `true` when it was answered and its connection kept.
        case opened(Bool)
    }

    /// Whether connections are opened by a no-op before a download uses them: before first use
    /// on FoundationNetworking, never on Apple's URLSession (whose connections do not spin).
    enum Opening: Equatable {
        case beforeFirstUse
        case never
    }

    /// The no-op request: none, or under way with the downloads that ended since it was sent
    /// and kept their connections (one of which it may have been given instead of opening one).
    enum NoOp: Equatable {
        case none
        case underWay(keptSince: Int)
    }

    /// Downloads at once, at most: the session's `httpMaximumConnectionsPerHost`.
    let limit: Int
    let opening: Opening
    /// Asked for and not yet sent, in the order asked.
    private(set) var waiting: [Int] = []
    /// Sent and not finished.
    private(set) var sending: Set<Int> = []
    /// The no-op under way, if any (one at a time).
    private(set) var noOp = NoOp.none
    /// Connections believed open, idle or carrying a download.
    private(set) var openConnections = 0

    init(limit: Int, opening: Opening) {
        self.limit = max(1, limit)
        self.opening = opening
    }

    /// Feeds one event; returns what to do, in order.
    mutating func handle(_ event: Event) -> [Effect] {
        var effects: [Effect] = []
        var sendWithoutOpening = false
        switch event {
        case .asked(let id):
            guard !waiting.contains(id), !sending.contains(id) else { return [] }
            waiting.append(id)
        case .left(let id):
            if let index = waiting.firstIndex(of: id) {
                waiting.remove(at: index)
                return []
            }
            guard sending.remove(id) != nil else { return [] }
            openConnections = max(0, openConnections - 1)
            effects.append(.cancel(id))
        case .finished(let id, let kept):
            guard sending.remove(id) != nil else { return [] }
            if !kept {
                openConnections = max(0, openConnections - 1)
            } else if case .underWay(let keptSince) = noOp {
                noOp = .underWay(keptSince: keptSince + 1)
            }
        case .opened(let kept):
            let keptSince: Int
            if case .underWay(let count) = noOp { keptSince = count } else { keptSince = 0 }
            noOp = .none
            if kept {
                // Counted only when no download gave up a connection meanwhile: libcurl may have
                // given it that one (a connection too few counted costs a no-op; one too many, a
                // download on a fresh connection).
                if keptSince == 0 { openConnections += 1 }
            } else {
                // The server did not answer the no-op: the next download goes as it is, so its
                // own error is what the caller sees (and no no-op is retried in a loop).
                sendWithoutOpening = true
            }
        }
        effects += pump(sendWithoutOpening: sendWithoutOpening)
        return effects
    }

    private mutating func pump(sendWithoutOpening: Bool) -> [Effect] {
        var effects: [Effect] = []
        var sendWithoutOpening = sendWithoutOpening
        while !waiting.isEmpty && sending.count + (noOp == .none ? 0 : 1) < limit {
            let idle = openConnections - sending.count
            if opening == .never || idle > 0 || sendWithoutOpening {
                sendWithoutOpening = false
                let id = waiting.removeFirst()
                sending.insert(id)
                // No idle connection: the download opens one itself.
                if idle <= 0 { openConnections += 1 }
                effects.append(.send(id))
            } else {
                // One no-op at a time, after the sends, while every connection carries a
                // download: so it cannot be given an idle connection, and opens one. No-ops sent
                // together would not open one each (URLSession on Linux sends them one after
                // another, over one connection).
                if noOp == .none {
                    noOp = .underWay(keptSince: 0)
                    effects.append(.openConnection)
                }
                break
            }
        }
        return effects
    }
}
