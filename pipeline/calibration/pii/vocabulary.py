"""Word lists shared by the person-name detector and the placeholder map."""

from __future__ import annotations

# Capitalised words that follow a trigger but are not names ("I'm Sorry", "Hello World").
NOT_NAMES = frozenset("""
a able about account admin afraid afternoon again all already also am an and any anyone april
are as at august back be best billing but by bye calling can care concerned confused contacting
correct currently customer customers day dear december done enterprise evening everyone
february feeling fine folks following for friday friend friends from frustrated getting glad
going good goodbye great guys happy having hello help helpdesk here hey hi how i if in
incorrect interested is it january july june just listed looking madam manager march may
missing misspelled monday morning my new no not november now october of ok okay on or order our
please premium reaching ready really regards sales saturday september service so sorry spelled
still sunday support sure team thank thanks that the there these this those thursday to today
tomorrow trying tuesday unable very we wednesday well what when where why with wondering
working world writing wrong yes yesterday you your
""".split())
