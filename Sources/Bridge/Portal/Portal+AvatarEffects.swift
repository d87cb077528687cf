import IsthmusCommon
import IsthmusStore

/// The avatar sub-machine's actions (``AvatarMachine/Action``): I/O only, through ``AvatarFetcher``. Failures are logged
/// (refused images at most once a minute, there) and end the action. On the portal's actor.
extension Portal {
    /// Performs one action of the avatar sub-machine (none has an outcome).
    func performAvatars(_ action: AvatarMachine.Action) async {
        switch action {
        case .setGhostAvatar(let job): await setGhostAvatar(job)
        case .setPuppetAvatar(let job): await setPuppetAvatar(job)
        }
    }

    /// Gives the ghost its XMPP occupant's avatar in the Matrix room, or removes it.
    private func setGhostAvatar(_ job: AvatarMachine.GhostAvatar) async {
        guard let fetcher = context.avatars else { return }
        var mxc: MXCURI?
        if let sha1 = job.sha1 {
            guard let uploaded = await fetcher.xmppAvatar(sha1: sha1, sources: job.sources, asker: context.naming.botOccupant,
                                                          xmpp: context.xmpp, ghost: job.ghost) else { return }
            mxc = uploaded
        }
        do {
            try await context.matrix.setRoomAvatar(mxc, for: job.ghost, in: link.matrixRoom)
        } catch {
            logger.warning("Could not set a ghost's avatar", metadata: ["matrix.user.id": job.ghost.rawValue, "error": "\(error)"])
        }
    }

    /// Makes the Matrix user's avatar its puppet's vCard photo and presence hash in the MUC (announced at once when joined).
    private func setPuppetAvatar(_ job: AvatarMachine.PuppetAvatar) async {
        guard let fetcher = context.avatars else { return }
        var image: StoredAvatar?
        if let mxc = job.mxc {
            guard let fetched = await fetcher.matrixAvatar(mxc: mxc) else { return }
            image = fetched
        }
        do {
            try await context.xmpp.setPuppetAvatar(image, occupant: job.occupant, room: link.muc, nick: job.nick)
        } catch {
            logger.info("Could not announce a puppet's avatar", metadata: ["matrix.user.id": job.user.rawValue, "error": "\(error)"])
        }
    }
}
