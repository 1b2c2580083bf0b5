"""The game contract and everything game-independent that needs no network: RNG, hashing,
component sheets, the match state machine and game records. Imports no gRPC."""
