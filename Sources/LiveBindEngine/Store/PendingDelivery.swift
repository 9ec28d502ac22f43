/// What a single-edit commit leaves to deliver once the store's lock is released.
enum PendingDelivery: Sendable {
    /// Nothing: no observer hears the change, or another thread is delivering and will run the calls.
    case none
    /// The store was idle and exactly one observer hears the change: the writer, now the deliverer,
    /// calls it directly, with no queue in between (the common `set` with one observer).
    case single(ObserverBox, Change, ChangeStamp)
    /// Calls that the writer, now the deliverer, runs from a batch.
    case batch(DeliveryBatch)
}
