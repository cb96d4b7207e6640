"""The handlers of the daemon's own requests and commands (`checkpoint/items`, `checkpoint/search`,
`checkpoint/sessions`, `checkpoint.accept`/`dismiss`, `checkpoint.supersede`): each parses its params
and reads or writes the store on a worker; `server/app.py` registers them. They hold no state: state is
a feature's (server/features/)."""
