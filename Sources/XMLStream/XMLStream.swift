// XMLStream module (being built).
