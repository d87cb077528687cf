import IsthmusCommon

// Typed ids bind as their text form.
extension RoomID: SQLiteBindable {}
extension RoomAlias: SQLiteBindable {}
extension UserID: SQLiteBindable {}
extension EventID: SQLiteBindable {}
extension TransactionID: SQLiteBindable {}
extension JID: SQLiteBindable {}
extension StanzaID: SQLiteBindable {}
extension OriginID: SQLiteBindable {}
extension OccupantID: SQLiteBindable {}
extension MessageIDAttribute: SQLiteBindable {}
extension LeaseOwner: SQLiteBindable {}
