import Media
import Testing

@Suite struct MediaKindTests {
    @Test func mediaTypesPickTheMsgtype() {
        #expect(MediaKind(mediaType: "image/png") == .image)
        #expect(MediaKind(mediaType: "IMAGE/JPEG; q=1") == .image)
        #expect(MediaKind(mediaType: "image/svg+xml") == .file)
        #expect(MediaKind(mediaType: "video/mp4") == .video)
        #expect(MediaKind(mediaType: "audio/ogg; codecs=opus") == .audio)
        #expect(MediaKind(mediaType: "application/pdf") == .file)
        #expect(MediaKind(mediaType: nil) == .file)
        #expect(MediaKind.mediaType(forFileName: "voice.OGG") == "audio/ogg")
        #expect(MediaKind.mediaType(forFileName: "noextension") == nil)
        #expect(MediaKind.mediaType(forFileName: ".png") == nil)
    }

    @Test func imageSizesComeFromTheHeader() {
        let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52,
                            0, 0, 2, 0, 0, 0, 1, 0x2c, 8, 6, 0, 0, 0]
        #expect(ImageDimensions.read(png).map { [$0.width, $0.height] } == [512, 300])
        let gif = Array("GIF89a".utf8) + [0x40, 0x01, 0xf0, 0x00]
        #expect(ImageDimensions.read(gif).map { [$0.width, $0.height] } == [320, 240])
        // JPEG: SOI, an APP0 segment, then SOF0 with height 480, width 640.
        let jpeg: [UInt8] = [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 17, 8, 0x01, 0xe0, 0x02, 0x80, 3, 0, 0, 0]
        #expect(ImageDimensions.read(jpeg).map { [$0.width, $0.height] } == [640, 480])
        #expect(ImageDimensions.read(Array(png.prefix(20))) == nil, "cut short")
        #expect(ImageDimensions.read([0xff, 0xd8, 0xff, 0xe0, 0, 1]) == nil, "a bad segment length")
        #expect(ImageDimensions.read(Array("hello".utf8)) == nil)
    }
}
