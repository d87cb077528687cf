// Network module (being built).
