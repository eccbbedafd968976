"""`vmine explain`: pasted text -> messages (`tracebacks`), the datasets searched (`index`),
ranking (`match`), the page printed (`page`) and the command (`command`)."""
