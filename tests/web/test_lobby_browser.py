"""The lobby page in Chromium (issue 33, item 6): a person opens a seek that a bot accepting
challenges fills through its Session, and the page opens that seat's play page with the seat
token in the address's fragment only; a friend's invitation link is used from its fragment,
which the page takes out of the address bar. No token, lobby identity or invitation secret is
ever in a request line."""
from __future__ import annotations

import asyncio
import random

import grpc
import httpx

from referee.v1 import referee_pb2 as pb
from referee.v1 import referee_pb2_grpc
from tests.server.conftest import ADMIN
from tests.server.helpers import md, play_seat

from .browser import save_screenshot, wait_until


async def _challenge_taker(web, ready: asyncio.Event) -> None:
    """A bot whose Session accepts challenges in goa, playing every seat it gets at random."""
    async with grpc.aio.insecure_channel(web.target) as ch:
        stub = referee_pb2_grpc.RefereeStub(ch)
        token = (await stub.RegisterBot(pb.RegisterBotRequest(name="duelist"),
                                        metadata=md(ADMIN))).bot_token
        out: asyncio.Queue = asyncio.Queue()
        out.put_nowait(pb.SessionClientMessage(hello=pb.SessionHello(
            capacity=4, accept_challenges=True, challenge_games=["goa"])))

        async def frames():
            while True:
                yield await out.get()

        games = []
        async for msg in stub.Session(frames(), metadata=md(token)):
            if msg.WhichOneof("msg") == "welcome":
                ready.set()
            elif msg.WhichOneof("msg") == "assignment":
                a = msg.assignment
                out.put_nowait(pb.SessionClientMessage(ack=pb.AssignmentAck(
                    match_id=a.match_id, seat=a.seat, accept=True)))
                games.append(asyncio.ensure_future(
                    play_seat(stub, a.match_id, a.seat_token, random.Random(a.seat))))


def _requests(page) -> list[str]:
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url))
    return seen


def test_a_seek_filled_by_a_bot_opens_the_seat_with_its_token_in_the_fragment(web, page,
                                                                                tmp_path):
    ready = asyncio.Event()
    web.background(_challenge_taker(web, ready))

    async def wait_ready():
        await asyncio.wait_for(ready.wait(), 30)
    web.call(wait_ready())
    seen = _requests(page)
    page.goto(web.base + "/lobby")
    assert "duelist" in page.locator("#bots").inner_text()
    form = page.locator("#seek-form")
    assert form.locator("input[name=seats]").input_value() == "3"  # Batavia's least
    form.locator("select[name=game]").select_option("goa")
    assert form.locator("input[name=seats]").get_attribute("max") == "4"
    # a seek opened meanwhile shows without a reload (the list is polled)
    other = httpx.post(web.base + "/api/lobby/enter", json={"name": "zed"}).json()["lobby_token"]
    httpx.post(web.base + "/api/lobby/seeks", headers={"Authorization": f"Bearer {other}"},
               json={"game": "batavia", "seats": 3, "preset": "rapid"})
    wait_until(page, "document.querySelectorAll('#seeks tbody tr[data-seek]').length === 1",
               timeout=15_000)
    assert "zed" in page.locator("#seeks").inner_text()
    save_screenshot(page.locator("body"), tmp_path, "lobby.png")
    form.locator("input[name=seats]").fill("2")
    form.locator("input[name=bots_may_join]").check()
    form.locator("input[name=name]").fill("Ada")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/play/**")
    # the lobby sent the seat token in the play page's fragment; the play page moved it to
    # sessionStorage and off the address bar (referee/web/static/play.js)
    path = page.url.partition("#")[0]
    match_id = path.rsplit("/", 1)[1]
    token = _seat_token(page, match_id)
    lobby_token = page.evaluate("JSON.parse(localStorage.getItem('referee.lobby')).lobby_token")
    assert len(lobby_token) == 64
    for u in seen:  # what the browser sent: no secret in any request line
        assert token not in u and lobby_token not in u, u
    meta = httpx.get(web.base + f"/api/matches/{match_id}").json()["match"]
    assert sorted(meta["names"]) == ["Ada", "duelist"]
    assert not page.errors


def _seat_token(page, match_id: str) -> str:
    """The seat token the play page holds for ``match_id`` (its sessionStorage), once there."""
    wait_until(page, f"sessionStorage.getItem('referee-seat:{match_id}') !== null")
    token = page.evaluate(f"sessionStorage.getItem('referee-seat:{match_id}')")
    assert len(token) > 40 and "token" not in page.url
    return token


def test_an_invitation_link_seats_a_friend_from_its_fragment(web, page):
    host = httpx.post(web.base + "/api/lobby/enter", json={"name": "host"}).json()["lobby_token"]
    opened = httpx.post(web.base + "/api/lobby/seeks",
                        headers={"Authorization": f"Bearer {host}"},
                        json={"game": "goa", "seats": 2, "private": True}).json()
    secret = opened["invitation"]
    seen = _requests(page)
    page.goto(web.base + "/lobby/join#invite=" + secret)
    wait_until(page, "location.hash === ''")  # taken out of the address bar and history
    page.locator("#join-form input[name=name]").fill("Bea")
    page.locator("#join-form button[type=submit]").click()
    page.wait_for_url("**/play/**")
    token = _seat_token(page, page.url.partition("#")[0].rsplit("/", 1)[1])
    assert "token" not in page.url
    for u in seen:
        assert secret not in u and token not in u, u
    again = httpx.post(web.base + "/api/lobby/join",
                       headers={"Authorization": f"Bearer {host}"}, json={"invitation": secret})
    assert again.status_code == 403 and again.json()["reason"] == "BAD_INVITATION"
    assert not page.errors
