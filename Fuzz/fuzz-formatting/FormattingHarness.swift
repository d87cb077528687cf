import FuzzSupport
import IsthmusCommon
import MessageFormatting

/// The message converters on arbitrary text: a Matrix `formatted_body` (any HTML a client sends) through
/// ``HTMLToStyling``, an XMPP body (any text an occupant sends) through ``StylingToHTML``, and the first's output
/// through the second (what a Matrix message looks like if it came back).
///
/// Properties: nothing crashes or recurses on nesting; the output stays within a fixed multiple of the input (no
/// blow-up); the HTML written for Matrix contains only the tags of its allow-list (`strong em del code pre
/// blockquote br`), so an XMPP body can never inject markup.
@main enum Harness { static func main() { runFuzzer(fuzzFormatting) } }

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFormatting(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let text = String(decoding: input.rest(), as: UTF8.self)

    let styled = HTMLToStyling.convert(text) { user in user.localpart.isEmpty ? nil : "nick-" + user.localpart }
    // Per input byte at most a line break plus its prefix (≤ 32 `> ` and 8 levels of list indentation) is written.
    guard styled.body.utf8.count <= 128 * (text.utf8.count + 1) else {
        fuzzFailure("\(text.utf8.count) bytes of HTML became a \(styled.body.utf8.count)-byte body")
    }
    for body in [text, styled.body] {
        guard let html = StylingToHTML.convert(body) else { continue }
        guard html.utf8.count <= 32 * (body.utf8.count + 1) else {
            fuzzFailure("\(body.utf8.count) bytes of body became \(html.utf8.count) bytes of HTML")
        }
        checkAllowList(html)
    }
    return 0
}

private let allowedTags: Set<String> = ["strong", "em", "del", "code", "pre", "blockquote", "br"]

/// Every `<` of the HTML must open or close an allowed tag without attributes: text is escaped, so any other `<` is
/// injected markup. Scans bytes, as an HTML parser does (a `>` followed by a combining mark is still a `>`).
private func checkAllowList(_ html: String) {
    let bytes = Array(html.utf8)
    var index = 0
    while let open = bytes[index...].firstIndex(of: UInt8(ascii: "<")) {
        guard let close = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { fuzzFailure("an unclosed tag in \(html)") }
        var name = bytes[(open + 1)..<close]
        if name.first == UInt8(ascii: "/") { name = name.dropFirst() }
        guard allowedTags.contains(String(decoding: name, as: UTF8.self)) else {
            fuzzFailure("HTML outside the allow-list: <\(String(decoding: bytes[(open + 1)..<close], as: UTF8.self))> in \(html)")
        }
        index = close + 1
    }
}
