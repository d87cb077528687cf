import IsthmusFakes

extension FakeMUCServer {
    /// The benchmarks' fake MUC: each message the component sends is stamped as arrived (``MessageTracker``) by its body.
    static func tracking() throws -> FakeMUCServer {
        try FakeMUCServer(onGroupchat: { message in
            if let body = message.body { MessageTracker.arrived(body: body.utf8) }
        })
    }
}

extension AnsweringHomeserver {
    /// The benchmarks' homeserver: each event the bridge sends is stamped as arrived (``MessageTracker``) by its body.
    static func tracking() throws -> AnsweringHomeserver {
        try AnsweringHomeserver(onSend: { request in MessageTracker.arrived(body: request.body) })
    }
}
