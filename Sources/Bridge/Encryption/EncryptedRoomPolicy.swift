import IsthmusConfig

/// Which Matrix rooms the bridge takes part in, by their encryption (`encryption:` of the config): what a link and a
/// DM invitation are checked against.
public enum EncryptedRoomPolicy: Sendable, Equatable {
    /// Without `allow`: an encrypted room is refused (nothing said in it could be read).
    case refused
    /// `allow`: either kind.
    case allowed
    /// `require`: an unencrypted room is refused.
    case required

    public init(_ encryption: Config.Encryption) {
        self = !encryption.allow ? .refused : encryption.require ? .required : .allowed
    }

    /// Whether a room that is (or is not) encrypted may be bridged.
    public func accepts(encrypted: Bool) -> Bool {
        switch self {
        case .refused: !encrypted
        case .allowed: true
        case .required: encrypted
        }
    }
}
