import IsthmusCommon

/// Archived messages arriving for one running MAM query.
struct MAMCollector {
    /// The archive queried (the room's bare JID): results must come from it.
    var archive: JID
    /// Who asked: results must be addressed to it.
    var querier: JID
    var messages: [ArchivedMessage] = []
}
