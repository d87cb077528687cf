/// What ``HTTPServer`` does with a request whose headers have arrived, before it reads any byte of the body.
/// Returned by ``HTTPServer/Configuration/admission``. Pure value.
public enum HTTPAdmission: Sendable, Equatable {
    /// Read a body of at most `maxBodyBytes` (a larger declared `Content-Length` is answered 413 at once, a larger
    /// chunked body 413 once it ends), then hand the request over. `authenticated`: the request proved who sent it,
    /// so its connection gets the longer idle timeout and is the last to be dropped under pressure.
    case admit(maxBodyBytes: Int, authenticated: Bool)
    /// Answer `response` now, without reading the body, and close the connection. `reason` names the refusal in
    /// the rate-limited log (`missing_token`, `unknown_path` …).
    case refuse(HTTPServerResponse, reason: String)
}
