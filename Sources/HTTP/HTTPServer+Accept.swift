#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Accepting connections: in a loop until EAGAIN, round robin over the workers,
/// paused at `maxConnections` and, after EMFILE/ENFILE, for 100 ms.
extension HTTPServer {
    /// Accepts until EAGAIN, the connection cap, or a shortage of file descriptors.
    /// On `acceptQueue`.
    func acceptConnections(_ listener: Int32) {
        while true {
            let (fd, peer) = HTTPSocket.accept(listener)
            if fd < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    backOff()
                    return
                default:
                    return
                }
            }
            HTTPSocket.setNoDelay(fd)
            let (worker, keepAccepting) = state.withLock { s -> (HTTPWorker?, Bool) in
                guard !s.stopped, !s.workers.isEmpty else { return (nil, false) }
                counts.accepted()
                let w = s.workers[s.nextWorker]
                s.nextWorker = (s.nextWorker + 1) % s.workers.count
                updateAccepting(&s)
                return (w, !s.acceptSuspended)
            }
            guard let worker else {
                _ = Glibc.close(fd)
                return
            }
            worker.execute { worker.open(fd: fd, peer: peer) }
            if !keepAccepting { return }
        }
    }

    /// Out of file descriptors: stop accepting for 100 ms (or until a connection closes).
    func backOff() {
        state.withLock { s in
            s.backingOff = true
            updateAccepting(&s)
        }
        acceptQueue.asyncAfter(deadline: .now() + .milliseconds(100)) { [self] in
            state.withLock { s in
                s.backingOff = false
                updateAccepting(&s)
            }
        }
    }

    /// Suspends or resumes the accept source to match the state: running unless stopped,
    /// backing off, or at `maxConnections`. Called with the lock held.
    func updateAccepting(_ s: inout State) {
        guard let source = s.acceptSource, !s.stopped else { return }
        let shouldRun = !s.backingOff && counts.open < configuration.maxConnections
        if shouldRun && s.acceptSuspended {
            s.acceptSuspended = false
            source.resume()
        } else if !shouldRun && !s.acceptSuspended {
            s.acceptSuspended = true
            source.suspend()
        }
    }

    /// A connection's fd was closed. From any worker's thread.
    func connectionClosed() {
        let completions = state.withLock { s -> [@Sendable () -> Void] in
            counts.closed()
            s.backingOff = false
            updateAccepting(&s)
            return takeCompletionsIfDone(&s)
        }
        finish(completions)
    }
}
