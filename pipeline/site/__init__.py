"""Pages for people: the shared page model (`pages`), Markdown (`markdown`), the static HTML
site (`html`, with `assets/`) and the `render` command (`command`)."""
