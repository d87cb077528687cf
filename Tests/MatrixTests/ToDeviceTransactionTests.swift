import Foundation
import IsthmusCommon
import Matrix
import Testing

/// The end-to-end encryption parts of a transaction: to-device messages (MSC2409/MSC4203) and device list changes
/// (MSC3202), as Synapse 1.163 sends them.
@Suite struct ToDeviceTransactionTests {
    func decode(_ json: String) throws -> Transaction {
        try TransactionDecoder.decode(Data(json.utf8), id: TransactionID("7")!).get()
    }

    @Test func toDeviceMessagesAndDeviceListChangesAreRead() throws {
        let transaction = try decode("""
            {"events": [], "de.sorunome.msc2409.to_device": [
              {"type": "m.room.encrypted", "sender": "@alice:localhost", "to_user_id": "@_xmpp_romeo:localhost",
               "to_device_id": "ISTHMUSABC", "content": {"algorithm": "m.olm.v1.curve25519-aes-sha2", "sender_key": "k"}},
              {"type": "m.room.encrypted", "sender": "not a user", "to_user_id": "@_xmpp_romeo:localhost", "to_device_id": "X", "content": {}}
             ],
             "org.matrix.msc3202.device_lists": {"changed": ["@alice:localhost", "bad"], "left": []},
             "org.matrix.msc3202.device_one_time_keys_count": {}}
            """)
        #expect(transaction.toDevice == [ToDeviceEvent(
            type: "m.room.encrypted", sender: UserID("@alice:localhost")!, recipient: UserID("@_xmpp_romeo:localhost")!,
            recipientDevice: DeviceID("ISTHMUSABC")!,
            content: .object(["algorithm": .string("m.olm.v1.curve25519-aes-sha2"), "sender_key": .string("k")]))])
        #expect(transaction.rejectedEvents.count == 1, "the message with no valid sender is left out, the rest kept")
        #expect(transaction.deviceListsChanged == [UserID("@alice:localhost")!])
    }

    @Test func keyCountsAreReadForEachDevice() throws {
        let transaction = try decode("""
            {"events": [],
             "org.matrix.msc3202.device_one_time_keys_count": {"@_xmpp_romeo:localhost": {"DEV1": {"signed_curve25519": 12}, "DEV2": {}}},
             "org.matrix.msc3202.device_unused_fallback_key_types": {"@_xmpp_romeo:localhost": {"DEV1": [], "DEV3": ["signed_curve25519"]}}}
            """)
        let romeo = UserID("@_xmpp_romeo:localhost")!
        #expect(transaction.keyCounts == [
            DeviceKeyCount(user: romeo, device: DeviceID("DEV1")!, oneTimeKeys: 12, unusedFallbackKey: false),
            DeviceKeyCount(user: romeo, device: DeviceID("DEV2")!, oneTimeKeys: 0, unusedFallbackKey: nil),
            DeviceKeyCount(user: romeo, device: DeviceID("DEV3")!, oneTimeKeys: nil, unusedFallbackKey: true),
        ])
        #expect(try decode(#"{"events": [], "org.matrix.msc3202.device_one_time_keys_count": "nonsense"}"#).keyCounts.isEmpty)
    }

    @Test func aTransactionWithoutThemHasNone() throws {
        let transaction = try decode(#"{"events": []}"#)
        #expect(transaction.toDevice.isEmpty && transaction.deviceListsChanged.isEmpty)
        // A malformed device list part does not fail the transaction.
        #expect(try decode(#"{"events": [], "org.matrix.msc3202.device_lists": 5}"#).deviceListsChanged.isEmpty)
    }
}
