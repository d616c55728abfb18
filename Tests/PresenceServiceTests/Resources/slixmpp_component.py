"""An XMPP component made with slixmpp, an independent implementation of XEP-0114: it connects to the feed port,
proves the shared secret with the handshake, sends one presence on behalf of a user and leaves.

Usage: slixmpp_component.py COMPONENT-JID HOST PORT USER-JID, with the secret in $FEED_SECRET (never on the
command line). Exits 0 once the presence is sent, 1 if the session never started, 2 after 15 s without an end.
"""
import asyncio
import os
import sys

import slixmpp


class Feeder(slixmpp.ComponentXMPP):
    def __init__(self, jid, secret, host, port, user):
        super().__init__(jid, secret, host, port)
        self.user = user
        self.started = False
        self.add_event_handler("session_start", self.start)

    async def start(self, _event):
        self.started = True
        self.send_presence(pfrom=self.user, pto=self.boundjid.bare, pshow="dnd", pstatus="In a meeting (slixmpp)")
        await asyncio.sleep(0.5)
        self.disconnect()


def main():
    jid, host, port, user = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    feeder = Feeder(jid, os.environ["FEED_SECRET"], host, port, user)
    feeder.connect()
    # Give up after 15 s: a refused handshake must end the test's wait, not hang it.
    feeder.loop.call_later(15, lambda: os._exit(2))
    feeder.process(forever=False)
    sys.exit(0 if feeder.started else 1)


if __name__ == "__main__":
    main()
