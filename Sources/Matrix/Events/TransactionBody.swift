import IsthmusCommon

/// The JSON body of a transaction push, decoded entry by entry so one bad entry does not fail the rest. Pure.
///
/// `events` is required (appservice API "Pushing events"); `ephemeral` and its unstable name, and the to-device
/// messages (`de.sorunome.msc2409.to_device`, the only name Synapse sends), are optional; other fields are ignored.
public struct TransactionBody: Sendable, Codable {
    public var events: [ClientEvent]
    public var ephemeral: [EphemeralEvent]
    public var toDevice: [ToDeviceEvent] = []
    /// Users whose device lists changed (MSC3202 `org.matrix.msc3202.device_lists.changed`; Synapse never sends
    /// `left`).
    public var deviceListsChanged: [UserID] = []
    /// The appservice's devices' key counts (MSC3202 `device_one_time_keys_count`, `device_unused_fallback_key_types`).
    public var keyCounts: [DeviceKeyCount] = []
    public var rejectedEvents: [RejectedEvent]

    public init(events: [ClientEvent], ephemeral: [EphemeralEvent] = []) {
        self.events = events
        self.ephemeral = ephemeral
        rejectedEvents = []
    }

    enum CodingKeys: String, CodingKey {
        case events
        case ephemeral
        case unstableEphemeral = "de.sorunome.msc2409.ephemeral"
        case toDevice = "de.sorunome.msc2409.to_device"
        case deviceLists = "org.matrix.msc3202.device_lists"
        case oneTimeKeyCounts = "org.matrix.msc3202.device_one_time_keys_count"
        case unusedFallbackKeyTypes = "org.matrix.msc3202.device_unused_fallback_key_types"
    }

    /// The one-time key algorithm the counts are read for.
    static let oneTimeKeyAlgorithm = "signed_curve25519"

    /// MSC3202's device list changes; ids that are not user ids are left out.
    private struct DeviceLists: Codable {
        var changed: [String]?
    }

    /// Decodes one entry, keeping its raw JSON and the reason when it does not decode.
    private enum Entry<T: Decodable>: Decodable {
        case decoded(T)
        case rejected(JSONValue, String)

        init(from decoder: any Decoder) throws {
            do {
                self = .decoded(try T(from: decoder))
            } catch {
                let raw = (try? JSONValue(from: decoder)) ?? .null
                self = .rejected(raw, DecodingErrorSummary.describe(error))
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var rejected: [RejectedEvent] = []
        events = []
        for (index, entry) in try container.decode([Entry<ClientEvent>].self, forKey: .events).enumerated() {
            switch entry {
            case .decoded(let event): events.append(event)
            case .rejected(let raw, let reason): rejected.append(RejectedEvent(index: index, raw: raw, reason: reason))
            }
        }
        let ephemeralKey: CodingKeys = container.contains(.ephemeral) ? .ephemeral : .unstableEphemeral
        ephemeral = []
        for (index, entry) in (try container.decodeIfPresent([Entry<EphemeralEvent>].self, forKey: ephemeralKey) ?? []).enumerated() {
            switch entry {
            case .decoded(let event): ephemeral.append(event)
            case .rejected(let raw, let reason): rejected.append(RejectedEvent(index: index, raw: raw, reason: reason))
            }
        }
        for (index, entry) in (try container.decodeIfPresent([Entry<ToDeviceEvent>].self, forKey: .toDevice) ?? []).enumerated() {
            switch entry {
            case .decoded(let event): toDevice.append(event)
            case .rejected(let raw, let reason): rejected.append(RejectedEvent(index: index, raw: raw, reason: reason))
            }
        }
        let lists = try? container.decodeIfPresent(DeviceLists.self, forKey: .deviceLists)
        deviceListsChanged = (lists?.changed ?? []).compactMap(UserID.init)
        keyCounts = Self.keyCounts(
            oneTime: (try? container.decodeIfPresent([String: [String: [String: Int]]].self, forKey: .oneTimeKeyCounts)) ?? nil,
            fallback: (try? container.decodeIfPresent([String: [String: [String]]].self, forKey: .unusedFallbackKeyTypes)) ?? nil)
        rejectedEvents = rejected
    }

    /// Both MSC3202 maps (user → device → counts by algorithm / unused fallback key algorithms) as one list; entries
    /// whose ids are not valid, or that do not parse, are left out.
    private static func keyCounts(oneTime: [String: [String: [String: Int]]]?, fallback: [String: [String: [String]]]?) -> [DeviceKeyCount] {
        var counts: [String: DeviceKeyCount] = [:]
        for (user, devices) in oneTime ?? [:] {
            for (device, byAlgorithm) in devices {
                guard let userID = UserID(user), let deviceID = DeviceID(device) else { continue }
                counts[user + "|" + device] = DeviceKeyCount(user: userID, device: deviceID,
                                                             oneTimeKeys: byAlgorithm[oneTimeKeyAlgorithm] ?? 0, unusedFallbackKey: nil)
            }
        }
        for (user, devices) in fallback ?? [:] {
            for (device, algorithms) in devices {
                guard let userID = UserID(user), let deviceID = DeviceID(device) else { continue }
                counts[user + "|" + device, default: DeviceKeyCount(user: userID, device: deviceID, oneTimeKeys: nil, unusedFallbackKey: nil)]
                    .unusedFallbackKey = algorithms.contains(oneTimeKeyAlgorithm)
            }
        }
        return counts.values.sorted { ($0.user.rawValue, $0.device.rawValue) < ($1.user.rawValue, $1.device.rawValue) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(events, forKey: .events)
        if !ephemeral.isEmpty { try container.encode(ephemeral, forKey: .ephemeral) }
        if !toDevice.isEmpty { try container.encode(toDevice, forKey: .toDevice) }
        if !deviceListsChanged.isEmpty { try container.encode(DeviceLists(changed: deviceListsChanged.map(\.rawValue)), forKey: .deviceLists) }
    }
}
