"""A Streamlit client without a browser, for the session tests: what a script that knows
a session id (from an upload URL in a proxy's access log) can do with it.

Streamlit's frontend connects to ``/_stcore/stream`` with the subprotocol list
``["streamlit", <XSRF token or a placeholder>, <session id to resume>]``, sends a
``BackMsg`` with ``rerun_script`` and draws the ``ForwardMsg`` deltas that come back until
``script_finished``. ``run_page`` does the same and returns what was drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

RERUN_FINISHED = 2  # ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN: another run follows
# FINISHED_FRAGMENT_RUN_SUCCESSFULLY: a part of the page (e.g. the sign-in's own check on
# a timer) ran, not the page this client asked for; a resumed session may send one first.
FRAGMENT_FINISHED = 3


@dataclass
class Drawn:
    session_id: str | None = None
    strings: list[str] = field(default_factory=list)  # every string of every element drawn
    buttons: list[str] = field(default_factory=list)  # button labels

    @property
    def text(self) -> str:
        return "\n".join(self.strings)


def _strings(message: Message, out: list[str]) -> None:
    for descriptor, value in message.ListFields():
        if descriptor.type == descriptor.TYPE_MESSAGE:
            for item in [value] if isinstance(value, Message) else value:
                if isinstance(item, Message):
                    _strings(item, out)
        elif descriptor.type == descriptor.TYPE_STRING:
            out.extend([value] if isinstance(value, str) else value)


def run_page(url: str, *, session_id: str | None = None, cookie: str | None = None, query: str = "",
             timeout: float = 60) -> Drawn:
    """Connect to the app at ``url`` (naming ``session_id`` to resume, sending ``cookie``
    as the Cookie header), ask for one run and collect what it draws."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    protocols = ["streamlit", "PLACEHOLDER_AUTH_TOKEN"] + ([session_id] if session_id else [])
    headers = {"Cookie": cookie} if cookie else {}
    drawn = Drawn()
    with connect(url.replace("http", "ws", 1) + "/_stcore/stream", subprotocols=protocols,
                 additional_headers=headers, open_timeout=timeout, max_size=None) as ws:
        rerun = BackMsg()
        rerun.rerun_script.query_string = query
        ws.send(rerun.SerializeToString())
        while True:
            message = ForwardMsg()
            message.ParseFromString(ws.recv(timeout=timeout))
            kind = message.WhichOneof("type")
            if kind == "new_session":
                drawn.session_id = message.new_session.initialize.session_id
            elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
                element = message.delta.new_element
                _strings(element, drawn.strings)
                if element.WhichOneof("type") == "button":
                    drawn.buttons.append(element.button.label)
            elif kind == "script_finished" and message.script_finished not in (RERUN_FINISHED, FRAGMENT_FINISHED) \
                    and drawn.session_id is not None:
                return drawn


def page_session_ids(page) -> list[str]:
    """The Streamlit session ids the browser tab ``page`` is given, in order (read from
    the frames its WebSocket receives, as anyone watching the traffic could)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    seen: list[str] = []

    def on_frame(payload: Any) -> None:
        if isinstance(payload, (bytes, bytearray)):
            message = ForwardMsg()
            try:
                message.ParseFromString(bytes(payload))
            except Exception:
                return
            if message.WhichOneof("type") == "new_session":
                session_id = message.new_session.initialize.session_id
                if not seen or seen[-1] != session_id:
                    seen.append(session_id)

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    return seen


def cookie_header(context) -> str:
    """The Cookie header a browser context sends (HttpOnly cookies included)."""
    return "; ".join(f"{c['name']}={c['value']}" for c in context.cookies())
