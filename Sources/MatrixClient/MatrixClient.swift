// MatrixClient module (being built).
