import IsthmusCommon

/// Archived messages arriving for one running MAM query.
package struct MAMCollector: Sendable {
    /// The archive queried (the room's bare JID): results must come from it.
    package var archive: JID
    /// Who asked: results must be addressed to it.
    package var querier: JID
    package var messages: [ArchivedMessage] = []

    package init(archive: JID, querier: JID) {
        self.archive = archive
        self.querier = querier
    }
}
