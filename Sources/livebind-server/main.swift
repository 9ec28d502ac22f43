print("livebind-server: not built yet")
