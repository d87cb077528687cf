import IsthmusCommon

// Typed ids bind as their text form.
extension RoomID: SQLBindable {}
extension RoomAlias: SQLBindable {}
extension UserID: SQLBindable {}
extension EventID: SQLBindable {}
extension TransactionID: SQLBindable {}
extension JID: SQLBindable {}
extension StanzaID: SQLBindable {}
extension OriginID: SQLBindable {}
extension OccupantID: SQLBindable {}
extension StanzaAttributeID: SQLBindable {}
extension LeaseOwner: SQLBindable {}
extension MXCURI: SQLBindable {}
extension DeviceID: SQLBindable {}
