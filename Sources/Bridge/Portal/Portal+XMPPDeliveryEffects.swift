import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The Matrix → XMPP delivery machine's effects (``XMPPDeliveryMachine/Action``): the message map's lookups and
/// records of Matrix messages, the XEP-0363 upload of their files, and the stanzas from the senders' puppets. Runs on
/// the portal's actor.
extension Portal {
    func performXMPPDelivery(_ action: XMPPDeliveryMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .resolveMatrixTargets(let queued): return .xmppDelivery(await resolveMatrixTargets(queued))
        case .uploadMedia(let upload): return .xmppDelivery(await uploadMedia(upload))
        case .insertMapping(let mapping, let seq, let delivery, let reaction):
            return .xmppDelivery(await insertMapping(mapping, consumingInbox: seq, delivery: delivery, reaction: reaction))
        case .insertMappings(let inserts): return .xmppDelivery(await insertMappings(inserts))
        case .sendGroupchat(let delivery, let occupant): return .xmppDelivery(await sendGroupchat(delivery, from: occupant))
        case .sendCaption(let caption, let file, let occupant):
            _ = await context.xmpp.sendCaption(caption, of: file, .groupchat(room: link.muc, from: occupant), logger: logger)
        case .moderate(let job): return .xmppDelivery(await moderate(job))
        case .lookUpOwnMessage(let originID, let error): return .xmppDelivery(await lookUpOwnMessage(originID, error: error))
        case .markFailed(let originID): await markFailed(originID)
        case .postNotice(let text, let subject): await postNotice(text, subject: subject)
        case .dequeue(let seq): await dequeue(seq: seq)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    private func sendGroupchat(_ delivery: PortalStateMachine.XMPPDelivery, from occupant: JID) async -> XMPPDeliveryMachine.Input {
        do {
            try await context.xmpp.sendGroupchat(room: link.muc, from: occupant, body: delivery.stanza.body,
                                                 references: delivery.stanza.references, originID: delivery.originID)
            return .groupchatSent(delivery, nil)
        } catch {
            return .groupchatSent(delivery, Self.xmppFailure(error))
        }
    }

    /// The file goes to the XMPP server's upload service (`XMPPUploader` logs why it could not, once per reason).
    private func uploadMedia(_ upload: PortalStateMachine.MediaUpload) async -> XMPPDeliveryMachine.Input {
        guard case .uploaded(let url)? = await context.xmppUploader?.upload(
            mxc: upload.mxc, keys: upload.keys, name: upload.name, declaredSize: upload.declaredSize, mediaType: upload.mediaType) else {
            return .mediaUploaded(upload, url: nil)
        }
        return .mediaUploaded(upload, url: url)
    }

    private func moderate(_ job: PortalStateMachine.ModerationJob) async -> XMPPDeliveryMachine.Input {
        do {
            try await context.xmpp.moderate(room: link.muc, job.request, as: job.occupant)
            return .moderated(job, nil)
        } catch {
            return .moderated(job, Self.xmppFailure(error))
        }
    }

    /// What a Matrix event refers to, from the message map and the reactions table; for a media message, its file
    /// as uploaded to the XMPP server when the bridge does that.
    private func resolveMatrixTargets(_ queued: QueuedMatrixEvent) async -> XMPPDeliveryMachine.Input {
        let event = queued.event
        do {
            return .targetsResolved(queued, try await context.store.matrixTargets(of: event, in: link.matrixRoom,
                                                                                  relayed: context.relay != nil))
        } catch {
            if await context.storeIsBack(after: error) { return await resolveMatrixTargets(queued) }
            logger.error("Message map lookup failed", metadata: ["matrix.event.id": event.eventID.rawValue, "error": "\(error)"])
            return .targetsResolved(queued, nil)
        }
    }

    private func lookUpOwnMessage(_ originID: OriginID, error: StanzaErrorInfo) async -> XMPPDeliveryMachine.Input {
        let room = link.matrixRoom
        return .ownMessageFound(originID, mapping: try? await context.durably { try await context.store.mapping(room: room, originID: originID) },
                                error: error)
    }

    private func markFailed(_ originID: OriginID) async {
        context.metrics.refusedByXMPP(room: link.matrixRoom, originID: originID)
        let room = link.matrixRoom
        try? await context.durably { try await context.store.markFailed(room: room, originID: originID) }
    }

    private func insertMapping(_ mapping: MessageMapping, consumingInbox seq: Int64, delivery: PortalStateMachine.XMPPDelivery,
                               reaction: ReactionChange?) async -> XMPPDeliveryMachine.Input {
        do {
            return .mappingInserted(delivery, inserted: try await context.durably {
                try await context.store.insertMapping(mapping, consumingInbox: seq, reaction: reaction)
            })
        } catch {
            logger.error("Could not map a Matrix message", metadata: ["matrix.event.id": mapping.eventID?.rawValue ?? "-", "error": "\(error)"])
            return .mappingInserted(delivery, inserted: nil)
        }
    }

    /// A run's map rows, each consuming its inbox row, in one commit.
    private func insertMappings(_ inserts: [XMPPDeliveryMachine.MappingInsert]) async -> XMPPDeliveryMachine.Input {
        let rows = inserts.map { (mapping: $0.mapping, seq: $0.seq) }
        do {
            return .mappingsInserted(inserts.map(\.delivery), inserted: try await context.durably {
                try await context.store.insertMappings(rows)
            })
        } catch {
            logger.error("Could not map Matrix messages", metadata: ["matrix.events.count": "\(inserts.count)", "error": "\(error)"])
            return .mappingsInserted(inserts.map(\.delivery), inserted: nil)
        }
    }
}
