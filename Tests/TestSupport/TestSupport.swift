/// Test helpers shared by every test target. The loopback fakes and the raw HTTP client live in `IsthmusFakes` (shared
/// with `isthmus-bench`) and are re-exported here.
@_exported import IsthmusFakes
