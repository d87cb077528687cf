@testable import MessageFormatting
import Testing

/// What the HTML side writes, the XEP-0393 side reads back: for generated lines of nested spans (text without
/// directive characters), every directive ``InlineRenderer`` emits is parsed by ``StylingParser`` as a directive
/// (none is left over as a visible `*`), and no character comes back with a style it did not have.
@Suite struct InlineRendererTests {
    typealias Generator = GeneratedHTMLTests.Generator

    /// A random balanced token line: styles never nest in themselves or inside code (as ``StyledLineBuilder`` ensures).
    static func line(_ generator: inout Generator) -> [InlineToken] {
        let words = ["a", "bc", " ", "d e", " f", "g ", "\t", "\u{A0}h"]
        var tokens: [InlineToken] = []
        var open: [SpanStyle] = []
        for _ in 0..<(1 + generator.next(24)) {
            switch generator.next(3) {
            case 0:
                tokens.append(.text(generator.pick(words)))
            case 1:
                let candidates = SpanStyle.allCases.filter { !open.contains($0) }
                guard !open.contains(.code), !candidates.isEmpty else { continue }
                let style = generator.pick(candidates)
                open.append(style)
                tokens.append(.open(style))
            default:
                guard let style = open.popLast() else { continue }
                tokens.append(.close(style))
            }
        }
        while let style = open.popLast() { tokens.append(.close(style)) }
        return tokens
    }

    /// Each character with the styles around it.
    static func styledCharacters(_ tokens: [InlineToken]) -> [(Unicode.Scalar, Set<SpanStyle>)] {
        var open: Set<SpanStyle> = []
        var result: [(Unicode.Scalar, Set<SpanStyle>)] = []
        for token in tokens {
            switch token {
            case .text(let text): result += text.unicodeScalars.map { ($0, open) }
            case .open(let style): open.insert(style)
            case .close(let style): open.remove(style)
            }
        }
        return result
    }

    static func styledCharacters(_ spans: [StylingSpan], _ open: Set<SpanStyle> = []) -> [(Unicode.Scalar, Set<SpanStyle>)] {
        spans.flatMap { span -> [(Unicode.Scalar, Set<SpanStyle>)] in
            switch span {
            case .plain(let text): text.unicodeScalars.map { ($0, open) }
            case .styled(let style, let children): styledCharacters(children, open.union([style]))
            }
        }
    }

    @Test func everyWrittenDirectiveIsReadBackAndNoStyleIsInvented() {
        var generator = Generator(state: 0x0393)
        var styledSeen = 0
        for _ in 0..<2_000 {
            let tokens = Self.line(&generator)
            let written = InlineRenderer.render(tokens)
            let read = Self.styledCharacters(StylingParser.spans(Substring(written)))
            let original = Self.styledCharacters(tokens)
            #expect(String(String.UnicodeScalarView(read.map(\.0))) == String(String.UnicodeScalarView(original.map(\.0))),
                    "directive left as text in \(written.debugDescription)")
            guard read.count == original.count else { continue }
            for (got, had) in zip(read, original) where !got.1.isSubset(of: had.1) {
                Issue.record("\(written.debugDescription): '\(got.0)' read as \(got.1), written as \(had.1)")
            }
            styledSeen += read.filter { !$0.1.isEmpty }.count
        }
        #expect(styledSeen > 1_000)
    }

    @Test func examples() {
        #expect(InlineRenderer.render([.text("a"), .open(.strong), .text("b"), .close(.strong), .text("c")]) == "abc")
        #expect(InlineRenderer.render([.open(.strong), .text(" x "), .close(.strong)]) == " *x* ")
        #expect(InlineRenderer.render([.open(.strong), .open(.emphasis), .text("x"), .close(.emphasis), .close(.strong)])
            == "*_x_*")
        #expect(InlineRenderer.render([.text("a "), .open(.code), .text("x`y"), .close(.code)]) == "a x`y")
    }
}
