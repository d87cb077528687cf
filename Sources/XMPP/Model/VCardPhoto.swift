import FoundationEssentials
import XMLStream

/// The photo of a XEP-0054 vCard (`<vCard xmlns='vcard-temp'><PHOTO><TYPE/><BINVAL/></PHOTO></vCard>`): the image's
/// media type and bytes. The rest of a vCard is ignored when read and never written (no names or addresses leave the
/// bridge this way).
public struct VCardPhoto: Sendable, Hashable {
    /// `TYPE`, e.g. `image/png`; nil when absent.
    public var mediaType: String?
    /// The decoded `BINVAL`.
    public var data: [UInt8]

    public init(mediaType: String?, data: [UInt8]) {
        self.mediaType = mediaType
        self.data = data
    }

    /// Why a vCard's photo could not be read.
    public enum ReadError: Error, Sendable, Equatable {
        /// `BINVAL` is longer than `maxEncodedLength` characters.
        case tooLarge(encodedLength: Int)
        /// `BINVAL` is not base64.
        case invalidBase64
    }

    /// Reads the photo of a `<vCard xmlns='vcard-temp'>` element: nil when it has none (no `PHOTO`, an empty or
    /// external `EXTVAL` photo, or not a vCard). `maxEncodedLength` bounds the base64 text decoded.
    public static func read(_ vCard: XElement, maxEncodedLength: Int) throws(ReadError) -> VCardPhoto? {
        guard vCard.name == "vCard", vCard.namespace == XMPPNamespace.vcard,
              let photo = vCard.child("PHOTO", namespace: XMPPNamespace.vcard),
              let binval = photo.child("BINVAL", namespace: XMPPNamespace.vcard) else { return nil }
        let encoded = binval.text
        guard encoded.utf8.count <= maxEncodedLength else { throw .tooLarge(encodedLength: encoded.utf8.count) }
        // XEP-0054 BINVAL is base64 and clients wrap it in lines (RFC 2425): whitespace is dropped before decoding.
        let compact = String(String.UnicodeScalarView(encoded.unicodeScalars.filter { !$0.properties.isWhitespace }))
        guard !compact.isEmpty else { return nil }
        guard let data = Data(base64Encoded: compact) else { throw .invalidBase64 }
        let type = photo.child("TYPE", namespace: XMPPNamespace.vcard).map { trimmed($0.text) }
        return VCardPhoto(mediaType: type.flatMap { $0.isEmpty ? nil : $0 }, data: Array(data))
    }

    /// A vCard holding only this photo (nil: an empty vCard, "no vCard data", XEP-0054 §3.1).
    public static func vCard(_ photo: VCardPhoto?) -> XElement {
        var vCard = XElement("vCard", namespace: XMPPNamespace.vcard)
        if let photo {
            vCard.append(XElement("PHOTO", namespace: XMPPNamespace.vcard, children: [
                .element(XElement("TYPE", namespace: XMPPNamespace.vcard, children: [.text(photo.mediaType ?? "image/png")])),
                .element(XElement("BINVAL", namespace: XMPPNamespace.vcard, children: [.text(Data(photo.data).base64EncodedString())])),
            ]))
        }
        return vCard
    }

    /// The vCard request payload (`<vCard xmlns='vcard-temp'/>`).
    public static var request: XElement { XElement("vCard", namespace: XMPPNamespace.vcard) }
}

/// What a XEP-0153 `<x xmlns='vcard-temp:x:update'>` in a presence says about the sender's avatar (§4.1).
public enum AvatarUpdate: Sendable, Hashable {
    /// `<photo>sha1-hex</photo>`: the avatar is the image with this SHA-1 (lower-case hex).
    case photo(String)
    /// `<photo/>`: no avatar.
    case none
    /// `<x/>` without `<photo>`: the client is not ready to say; nothing changes.
    case notReady

    /// Reads the update element among a presence's `extensions`; nil when there is none. A `photo` that is not 40
    /// hex digits reads as ``notReady`` (nothing is fetched for it).
    public init?(extensions: [XElement]) {
        guard let x = extensions.first(where: { $0.name == "x" && $0.namespace == XMPPNamespace.vcardUpdate }) else { return nil }
        guard let photo = x.child("photo", namespace: XMPPNamespace.vcardUpdate) else {
            self = .notReady
            return
        }
        self.init(photoText: photo.text)
    }

    /// Reads a `<photo>` text (or another field carrying the same hash, such as XEP-0486's disco#info field): empty
    /// is ``none``, 40 hex digits a ``photo(_:)``, anything else ``notReady``.
    public init(photoText: String) {
        let hash = trimmed(photoText).lowercased()
        if hash.isEmpty {
            self = .none
        } else if hash.utf8.count == 40, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) {
            self = .photo(hash)
        } else {
            self = .notReady
        }
    }

    /// The `<x xmlns='vcard-temp:x:update'>` element announcing this (``notReady``: an empty `<x/>`).
    public var element: XElement {
        var x = XElement("x", namespace: XMPPNamespace.vcardUpdate)
        switch self {
        case .photo(let hash): x.append(XElement("photo", namespace: XMPPNamespace.vcardUpdate, children: [.text(hash)]))
        case .none: x.append(XElement("photo", namespace: XMPPNamespace.vcardUpdate))
        case .notReady: break
        }
        return x
    }
}

/// `text` without leading and trailing whitespace.
func trimmed(_ text: String) -> String {
    let scalars = text.unicodeScalars.drop { $0.properties.isWhitespace }.reversed().drop { $0.properties.isWhitespace }.reversed()
    return String(String.UnicodeScalarView(scalars))
}
