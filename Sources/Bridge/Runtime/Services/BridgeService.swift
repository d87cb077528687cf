/// A long-running part of the bridge, in swift-service-lifecycle's shape: ``run()`` returns when it stopped (on
/// cancellation, or when its input ended). Nothing starts in an `init`; ``Bridge/run(xmppEvents:)`` runs each as a
/// child task and cancels them all at shutdown.
protocol BridgeService: Sendable {
    func run() async
}
