/// After the bridge started or a homeserver transaction failed: asks for a round of timeline checks at each of
/// `delays` (measured from the start; see ``Bridge/defaultBackgroundTimelineChecks``), by calling `due`. Returns after
/// the last one, or when cancelled.
struct TimelineCheckSchedule: BridgeService {
    let delays: [Duration]
    let due: @Sendable () -> Void

    func run() async {
        var waited = Duration.zero
        for delay in delays {
            try? await Task.sleep(for: delay - waited)
            if Task.isCancelled { return }
            waited = delay
            due()
        }
    }
}

/// One round of timeline checks: every portal is asked to check its Matrix timeline, `batch` at a time with a `pause`
/// between batches, so a thousand rooms do not hit the homeserver in the same instant. Returns when all were asked,
/// or when cancelled.
struct TimelineCheckRound: BridgeService {
    let portals: [Portal]
    let batch: Int
    let pause: Duration

    func run() async {
        for (index, portal) in portals.enumerated() {
            if index > 0, index % batch == 0 {
                guard (try? await Task.sleep(for: pause)) != nil else { return }
            }
            portal.enqueue(.checkTimeline)
        }
    }
}
