import IsthmusCommon

/// A Matrix event as it sits in a room's durable inbox: its place (the inbox row's sequence number) and the event.
/// Handed to the portal straight from the transaction that wrote it, or read back from the store after a restart.
struct QueuedMatrixEvent: Sendable, Equatable {
    /// The inbox row; deleted (or consumed by the message map) once the event is handled.
    var seq: Int64
    var event: MatrixRoomEvent
}
