import Foundation
import IsthmusCommon
import Matrix
import MatrixAppService
import MatrixClient
import TestSupport
import Testing

/// The retry decisions, without a network.
@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 4, initialBackoff: .milliseconds(100), maxBackoff: .milliseconds(250),
                             maxRateLimitWaits: 2, maxRateLimitWait: .seconds(5))

    @Test func backoffDoublesUpToTheCap() {
        #expect((1...4).map(policy.backoff(afterAttempt:)) == [.milliseconds(100), .milliseconds(200), .milliseconds(250), .milliseconds(250)])
    }

    @Test func rateLimitsWaitForTheServersDelayCapped() {
        #expect(policy.decide(.status(429, errcode: "M_LIMIT_EXCEEDED", retryAfterMilliseconds: 1500, retryAfterHeaderSeconds: nil),
                              mode: .rateLimitOnly, attempts: 1, rateLimitWaits: 0) == .retry(after: .milliseconds(1500)))
        #expect(policy.decide(.status(400, errcode: "M_LIMIT_EXCEEDED", retryAfterMilliseconds: 60_000, retryAfterHeaderSeconds: nil),
                              mode: .full, attempts: 1, rateLimitWaits: 1) == .retry(after: .seconds(5)))
        #expect(policy.decide(.status(429, errcode: nil, retryAfterMilliseconds: nil, retryAfterHeaderSeconds: 2),
                              mode: .full, attempts: 1, rateLimitWaits: 0) == .retry(after: .seconds(2)))
        #expect(policy.decide(.status(429, errcode: nil, retryAfterMilliseconds: nil, retryAfterHeaderSeconds: nil),
                              mode: .full, attempts: 1, rateLimitWaits: 2) == .fail)
    }

    @Test func serverAndNetworkErrorsRetryOnlyWhenSafeAndBounded() {
        let serverError = RetryPolicy.Failure.status(503, errcode: nil, retryAfterMilliseconds: nil, retryAfterHeaderSeconds: nil)
        #expect(policy.decide(serverError, mode: .full, attempts: 1, rateLimitWaits: 0) == .retry(after: .milliseconds(100)))
        #expect(policy.decide(serverError, mode: .full, attempts: 4, rateLimitWaits: 0) == .fail)
        #expect(policy.decide(serverError, mode: .rateLimitOnly, attempts: 1, rateLimitWaits: 0) == .fail)
        #expect(policy.decide(.transport, mode: .rateLimitOnly, attempts: 1, rateLimitWaits: 0) == .fail)
        #expect(policy.decide(.connectionRefused, mode: .rateLimitOnly, attempts: 1, rateLimitWaits: 0) == .retry(after: .milliseconds(100)))
        #expect(policy.decide(.status(404, errcode: "M_NOT_FOUND", retryAfterMilliseconds: nil, retryAfterHeaderSeconds: nil),
                              mode: .full, attempts: 1, rateLimitWaits: 0) == .fail)
    }

    @Test func percentEncodingRoundTrips() {
        for text in ["!a:b", "$ev/x+y", "#alias:server", "@ü:x", "a b%", "t/1:#ü", ""] {
            #expect(PercentEncoding.decode(PercentEncoding.encode(text)) == text)
            #expect(PercentEncoding.encode(text).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%".contains($0)) })
        }
        #expect(PercentEncoding.decode("%G0") == nil && PercentEncoding.decode("%4") == nil && PercentEncoding.decode("%FF") == nil)
    }
}
