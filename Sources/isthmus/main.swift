import IsthmusCLI
await IsthmusCommandLine.main()
