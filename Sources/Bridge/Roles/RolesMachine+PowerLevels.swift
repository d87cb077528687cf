import IsthmusCommon

/// MUC affiliations and roles → the ghosts' Matrix power levels, one way (RICH.md §10: XMPP is authoritative for the
/// MUC; a Matrix admin, perhaps of a remote homeserver, must never become a MUC owner).
///
/// Presences only mark the wanted levels as changed; the change itself is made once per portal turn: the first
/// change queues ``PortalEvent/syncPowerLevels`` behind the events already queued, so a join burst of fifty
/// occupants makes one `m.room.power_levels` event, not fifty. Nothing is sent until the occupant list is complete
/// after a join (a level would otherwise be revoked from an occupant whose presence has not arrived yet).
extension RolesMachine {
    /// Where the ghosts' power levels stand.
    struct PowerLevelSync: Sendable, Equatable {
        /// A ``PortalEvent/syncPowerLevels`` is queued.
        var queued = false
        /// The occupant list is complete (after the ghost reconciliation that follows a join).
        var ready = false
        /// The levels last sent (nil: none yet in this portal's life, or the last attempt failed).
        var applied: [UserID: Int64]?
        /// The lack of power was logged already (once per portal life).
        var noPowerLogged = false
        /// Ghosts are names only (Matrix client mode): no levels to give, none is ever sent.
        var off = false
    }

    /// How an ``Action/applyGhostPowerLevels(_:)`` ended.
    enum PowerLevelResult: Sendable, Equatable {
        case unchanged
        case updated(capped: [UserID], untouchable: [UserID])
        case noPower(have: Int64?, need: Int64)
        case failed(MatrixFailure)
    }

    /// The level each present occupant's ghost should have, from its affiliation and role (none listed: no level).
    static func wantedGhostLevels(in room: Room) -> [UserID: Int64] {
        room.occupants().reduce(into: [:]) { wanted, occupant in
            guard let level = GhostPowerLevels.level(affiliation: occupant.affiliation, role: occupant.role,
                                                     levels: room.roleLevels) else { return }
            wanted[occupant.ghost] = max(wanted[occupant.ghost] ?? level, level)
        }
    }

    /// The room model changed (an occupant came, went or changed role): a sync is queued when the wanted levels
    /// differ from those last sent and none is queued yet.
    mutating func powerLevelsMayHaveChanged(in room: Room) -> [Action] {
        guard !powerLevelSync.off, powerLevelSync.ready, !powerLevelSync.queued, Self.wantedGhostLevels(in: room) != powerLevelSync.applied else { return [] }
        powerLevelSync.queued = true
        return [.queuePowerLevelSync]
    }

    /// The queued sync (or the end of a join): the wanted levels go to the room, when they changed.
    mutating func syncPowerLevels(in room: Room) -> [Action] {
        powerLevelSync.queued = false
        guard !powerLevelSync.off, room.botJoined, powerLevelSync.ready else { return [] }
        let wanted = Self.wantedGhostLevels(in: room)
        guard wanted != powerLevelSync.applied else { return [] }
        powerLevelSync.applied = wanted
        return [.applyGhostPowerLevels(GhostPowerLevels(wanted: wanted))]
    }

    /// What became of an `m.room.power_levels` change.
    mutating func powerLevelsApplied(_ levels: GhostPowerLevels, _ result: PowerLevelResult) -> [Action] {
        switch result {
        case .unchanged:
            return []
        case .updated(let capped, let untouchable):
            var actions: [Action] = [.log(LogEntry(level: .info, message: "Ghosts' power levels follow the MUC's roles",
                                                   metadata: ["matrix.power_levels.ghosts": "\(levels.wanted.count)"]))]
            if !capped.isEmpty || !untouchable.isEmpty {
                actions.append(.log(LogEntry(level: .notice, message: "Some ghosts' power levels are bounded by the bot's own", metadata: [
                    "matrix.power_levels.capped": capped.map(\.rawValue).joined(separator: ","),
                    "matrix.power_levels.untouchable": untouchable.map(\.rawValue).joined(separator: ","),
                ])))
            }
            return actions
        case .noPower(let have, let need):
            guard !powerLevelSync.noPowerLogged else { return [] }
            powerLevelSync.noPowerLogged = true
            return [.log(LogEntry(level: .warning, message: "The bot may not change the room's power levels; MUC roles are not shown on Matrix",
                                  metadata: ["matrix.power_level.bot": have.map(String.init) ?? "none", "matrix.power_level.needed": "\(need)"]))]
        case .failed(let failure):
            // Tried again at the next change or join; an unavailable homeserver is no reason to stop anything else.
            if powerLevelSync.applied == levels.wanted { powerLevelSync.applied = nil }
            return [.log(LogEntry(level: .warning, message: "Could not change the room's power levels", metadata: ["error": "\(failure)"]))]
        }
    }
}
