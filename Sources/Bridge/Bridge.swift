// Bridge module (being built).
