/// The algorithm names of Matrix end-to-end encryption (spec §11.12.4 "Messaging algorithms", §11.12.2 "One-time and
/// fallback keys"), in one place. Constants only.
public enum MatrixAlgorithm {
    /// Olm: pairwise, for to-device messages (room keys).
    public static let olm = "m.olm.v1.curve25519-aes-sha2"
    /// Megolm: a room's messages.
    public static let megolm = "m.megolm.v1.aes-sha2"
    /// The one-time and fallback key algorithm (`signed_curve25519:<key id>`).
    public static let signedCurve25519 = "signed_curve25519"
}
