"""The referee process: the gRPC front, match play, leagues and the stores, in rooms
(README.md here names them and their order).

    from referee.server import RefereeServer, ServerConfig
    server = RefereeServer(ServerConfig(port=0, data_dir="data", admin_token="..."))
    port = await server.start(); ...; await server.stop()
"""
from referee.server.app import RefereeServer, serve
from referee.server.config import ServerConfig

__all__ = ["RefereeServer", "ServerConfig", "serve"]
