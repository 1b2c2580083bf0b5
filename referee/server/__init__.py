"""The referee server: grpc.aio service, auth, limits, time policy and the SQLite store.

    from referee.server import ServerConfig, RefereeServer
    server = RefereeServer(ServerConfig(port=0, data_dir="data", admin_token="..."))
    port = await server.start(); ...; await server.stop()
"""
from .app import RefereeServer, ServerConfig, serve

__all__ = ["RefereeServer", "ServerConfig", "serve"]
