#if THUMBD_TSAN
import Locking

/// ThreadSanitizer builds only (`-DTHUMBD_TSAN`): this module's `Mutex` is Locking's, on
/// pthread_mutex, which TSan understands; otherwise it is Synchronization's (see Locking).
typealias Mutex<Value> = Locking.Mutex<Value>
#endif
