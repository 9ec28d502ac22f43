internal import LiveBindHTTP

/// The views of an event hub, counted against `--max-views` (distinct views shown at once) and
/// `--max-view-rows` (elements all views arrange together: each view holds a node per element of its
/// array, about 200 bytes).
///
/// A new view counts, with its rows, from the moment it is arranged outside the lock
/// (`EventHub.arrangeViews`), and the rows of an array arranged again outside the lock count while it
/// is (`EventHub.startRearranging`), so that requests arranging at once cannot pass the limits
/// together. The rows of the views the mirrors hold are not kept here: arrays grow and shrink with
/// every commit, so they are counted from the views when new views are checked (`EventHub.checkViews`)
/// and after each commit to a model with views (`EventHub.keepViewRows`, which drops views past
/// `--max-view-rows`).
///
/// Part of `EventHub.State`: read and changed only with the hub's lock held.
///
/// Invariants: `shown` is the number of views all mirrors hold; `arranging` and `arrangingRows` are
/// what was started (`startArranging`) and not yet finished (`finishArranging`).
struct ViewCensus {
    /// Most distinct views shown at once (`EventHub.Settings.maxViews`).
    let maxViews: Int
    /// Most elements all views arrange together (`EventHub.Settings.maxViewRows`).
    let maxViewRows: Int
    /// The views the mirrors hold.
    var shown = 0
    /// New views being arranged outside the lock.
    private(set) var arranging = 0
    /// Elements of the arrays being arranged outside the lock, for new views and views arranged again.
    private(set) var arrangingRows = 0

    /// Counts an array of `rows` elements arranged outside the lock: for a new view (`newView`,
    /// which counts as a view too) or for a view arranged again.
    mutating func startArranging(rows: Int, newView: Bool) {
        if newView { arranging += 1 }
        arrangingRows += rows
    }

    /// Stops counting what `startArranging` counted.
    mutating func finishArranging(rows: Int, newView: Bool) {
        if newView { arranging -= 1 }
        arrangingRows -= rows
    }

    /// Throws unless `added` views more fit under `--max-views`, with the views being arranged but
    /// `reserved` of them (the caller's own, already counted).
    func check(adding added: Int, reserved: Int) throws(RequestError) {
        if shown + (arranging - reserved) + added > maxViews { throw .tooManyViews(limit: maxViews) }
    }

    /// Throws unless views arranging `rows` elements (those the mirrors hold and the new ones) fit
    /// under `--max-view-rows`, with the arrays being arranged but `reserved` rows of them (the
    /// caller's own, already counted).
    func check(rows: Int, reserved: Int) throws(RequestError) {
        if rows + (arrangingRows - reserved) > maxViewRows { throw .tooManyViewRows(limit: maxViewRows) }
    }
}
