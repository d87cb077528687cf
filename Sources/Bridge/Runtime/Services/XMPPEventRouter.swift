import IsthmusCommon

/// Hands each XMPP event to its portal (through the ``PortalDirectory``), counting it on the way. While the store
/// cannot write (a full disk, an unreachable database) nothing more is taken from XMPP: what is not taken is not lost
/// (the component's reading pauses behind it, and the room's archive still has it after a restart). Returns when the
/// events end or the store closes for good. An event's receipt (client mode) goes with it to its portal, which
/// gives it once the event's effect is durable; an event no portal takes is handled here and then.
struct XMPPEventRouter<Events: AsyncSequence & Sendable>: BridgeService where Events.Element == XMPPLinkArrival, Events.Failure == Never {
    let events: Events
    let context: BridgeContext
    let directory: PortalDirectory
    /// The rooms the component hosts (gateway mode), which take the `gateway` events.
    var gatewayRooms: GatewayRooms?

    func run() async {
        let (xmpp, writeGate, metrics, clock) = (context.xmpp, context.writeGate, context.metrics, context.clock)
        let botOccupant = context.naming.botOccupant
        for await arrival in events {
            let event = arrival.event
            if writeGate.isClosed {
                await xmpp.setReadingPaused(true)
                let writable = await writeGate.waitUntilWritable()
                await xmpp.setReadingPaused(false)
                guard writable else { return }
            }
            metrics.observe(event, botOccupant: botOccupant, now: clock.now())
            // The upload service is looked for once per XMPP connection.
            if case .connected = event { context.xmppUploader?.forgetService() }
            if case .gateway(let stanza) = event {
                await gatewayRooms?.xmpp(stanza)
                await arrival.receipt?.handled()
                continue
            }
            if case .subscriptionRequest(let requester) = event {
                await context.subscriptions.answer(requester, context: context)
                await arrival.receipt?.handled()
                continue
            }
            let unclaimed = directory.route(event, receipt: arrival.receipt, logger: context.logger)
            await unclaimed?.handled()
        }
    }
}
