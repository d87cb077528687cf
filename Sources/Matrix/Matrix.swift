// Matrix module (being built).
