"""Developer tools built on both the SDK (``referee_client``) and the tournament runner
(``referee_tournament``), the top layer of the clients (docs/ARCHITECTURE.md, *Layout*).

* :mod:`.demo`: ``make run``'s live match (``python -m referee_tools.demo``).
* :mod:`.local_play`: ``referee-bot play``, one match of your bot on a private referee.
* :mod:`.conformance`: ``referee-bot conformance``, a bot command put through a checklist.
* :mod:`.bot_cli`: ``referee-bot``, the SDK's command line with those two added.

Like the layers below, they start the referee only as a ``referee serve`` subprocess
(``referee_tournament.procs.LocalReferee``) and import nothing of it but the generated protocol.
"""
