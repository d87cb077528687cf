// MatrixAppService module (being built).
