"""A member logged in with slixmpp, an independent XMPP client: away with a status, until stdin closes.

Usage: slixmpp_member.py JID HOST PORT, with the password in $MEMBER_PASSWORD (never on the command line).
"""
import asyncio
import os
import sys

import slixmpp


class Member(slixmpp.ClientXMPP):
    def __init__(self, jid, password):
        super().__init__(jid + "/slixmpp", password)
        self.add_event_handler("session_start", self.start)

    async def start(self, _event):
        await self.get_roster()
        self.send_presence(pshow="away", pstatus="Lunch (slixmpp)", ppriority=3)
        loop = asyncio.get_running_loop()
        # Stay online until the test closes our standard input, then log off cleanly.
        await loop.run_in_executor(None, sys.stdin.read)
        self.disconnect()


def main():
    jid, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    member = Member(jid, os.environ["MEMBER_PASSWORD"])
    member.connect(address=(host, port), force_starttls=False, disable_starttls=True)
    member.process(forever=False)


if __name__ == "__main__":
    main()
