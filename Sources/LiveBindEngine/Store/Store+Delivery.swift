import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The bits of `Store.delivery`. At most one thread delivers at a time, which keeps commit order.
enum DeliveryState {
    /// A thread is delivering.
    static let delivering: UInt8 = 1
    /// Calls were queued while a thread was delivering: it must take them before it stops.
    static let waiting: UInt8 = 2
    /// The delivering thread is making a single call (`claimSingleDelivery`), after which its delivery
    /// has nothing left: a write that call makes may be delivered inside it (`claimNestedDelivery`).
    static let single: UInt8 = 4
    /// How deep single calls may nest (binding writes from bindings…); deeper writes are queued, so
    /// that a long chain of bindings does not grow the stack.
    static let maxNesting = 8
}

// Who delivers. A writer that queued calls becomes the deliverer unless one is at work; the deliverer
// runs calls until the queue is empty, or, once calls of other threads' writes wait in it, hands the
// queue to the store's relay thread (a writer runs the calls of its own write and of the writes those
// make, never others'). Claims and hand-overs happen under the store's lock; only the end of a single
// call's delivery is a compare-and-swap without the lock, which fails (and so takes the lock) exactly
// when a writer flagged `waiting` meanwhile.
extension Store {
    /// An id of the calling thread.
    @inline(__always)
    static var currentThread: UInt { UInt(pthread_self()) }

    /// Called with the lock held after queuing calls: when nobody delivers, makes the caller the
    /// deliverer and hands it the waiting deliveries.
    func claimDelivery(_ state: inout StoreState) -> DeliveryBatch? {
        guard !state.queue.isEmpty else { return nil }
        let old = delivery.bitwiseOr(DeliveryState.waiting, ordering: .acquiringAndReleasing).oldValue
        guard old & DeliveryState.delivering == 0 else {
            if state.deliverer != Self.currentThread { state.othersWaiting = true }
            return nil
        }
        delivery.store(DeliveryState.delivering, ordering: .releasing)
        state.deliverer = Self.currentThread
        state.othersWaiting = false
        return state.takeQueue()
    }

    /// Called with the lock held: when nobody delivers (so nothing is queued) and exactly one observer
    /// of `entry` hears a change at `path`, makes the caller the deliverer of that one call.
    func claimSingleDelivery(at path: Path, for entry: ModelEntry, _ state: inout StoreState) -> ObserverBox? {
        guard delivery.load(ordering: .acquiring) == 0, let box = entry.observers.soleObserver(at: path) else { return nil }
        delivery.store(DeliveryState.delivering | DeliveryState.single, ordering: .releasing)
        state.deliverer = Self.currentThread
        state.othersWaiting = false
        return box
    }

    /// Called with the lock held by a write made on the delivering thread from inside a single call
    /// (a binding propagating the change it was called with), `depth` binding writes deep: when
    /// nothing was queued meanwhile and exactly one observer of `entry` hears the change at `path`,
    /// the writer calls it at once, inside the current call. Commit order holds: nothing else waits,
    /// and the current call is the last of its delivery.
    func claimNestedDelivery(at path: Path, for entry: ModelEntry, depth: Int) -> ObserverBox? {
        guard depth <= DeliveryState.maxNesting,
            delivery.load(ordering: .acquiring) == DeliveryState.delivering | DeliveryState.single
        else { return nil }
        return entry.observers.soleObserver(at: path)
    }

    /// Runs `pending`, then the calls queued meanwhile, until the queue is empty; or, when calls of
    /// other threads' writes are among them and this is not the relay thread (`relayed`), hands the
    /// queue to the relay.
    ///
    /// `pending` is consumed so that its storage stays uniquely referenced: emptying it then keeps the
    /// storage for the next batch instead of allocating new storage.
    func deliver(_ pending: consuming DeliveryBatch, relayed: Bool = false) {
        var batch = pending
        repeat {
            batch.run()
        } while withState { state in
            guard !state.queue.isEmpty else {
                delivery.store(0, ordering: .releasing)
                state.keepSpare(&batch)
                return false
            }
            if state.othersWaiting && !relayed {
                state.keepSpare(&batch)
                handOverToRelay(&state)
                return false
            }
            delivery.store(DeliveryState.delivering, ordering: .releasing)
            swap(&batch, &state.queue)
            return true
        }
        deliveryEnded.notify()
    }

    /// Calls `box` with `change` (claimed with `claimSingleDelivery`), then delivers whatever was
    /// queued meanwhile (see `deliver(_:relayed:)`).
    func deliver(_ change: borrowing Change, _ stamp: ChangeStamp, to box: ObserverBox) {
        box.deliver(change, stamp)
        finishSingleDelivery()
    }

    /// Ends a single call's delivery: without the lock when nothing was queued meanwhile.
    private func finishSingleDelivery() {
        let ended = delivery.compareExchange(
            expected: DeliveryState.delivering | DeliveryState.single, desired: 0, ordering: .acquiringAndReleasing
        ).exchanged
        if ended { return deliveryEnded.notify() }
        let next: DeliveryBatch? = withState { state in
            delivery.store(DeliveryState.delivering, ordering: .releasing)
            if state.othersWaiting {
                handOverToRelay(&state)
                return nil
            }
            return state.takeQueue()
        }
        if let next { deliver(next) }
    }

    /// Called with the lock held by the deliverer: leaves delivering to the relay thread, which takes
    /// the queue as it starts. Delivery stays claimed meanwhile, so writers only queue.
    private func handOverToRelay(_ state: inout StoreState) {
        state.deliverer = 0
        relay.handOver { [weak self] in self?.deliverOnRelay() }
    }

    /// On the relay thread: delivers everything queued, until the queue is empty.
    private func deliverOnRelay() {
        let batch = withState { state in
            state.deliverer = Self.currentThread
            state.othersWaiting = false
            delivery.store(DeliveryState.delivering, ordering: .releasing)
            return state.takeQueue()
        }
        deliver(batch, relayed: true)
    }

    /// Waits until no delivery is under way (at most `timeout`) and says whether that happened: calls
    /// of other threads' writes may still run on the relay thread after their writers returned.
    package func waitUntilDelivered(timeout: Duration = .seconds(10)) -> Bool {
        deliveryEnded.wait(until: .now + timeout) {
            delivery.load(ordering: .acquiring) == 0 && withState { $0.queue.isEmpty }
        }
    }
}
