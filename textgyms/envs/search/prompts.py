"""The first observation of a Search episode, and the Search-R1 ``<information>`` block."""

from __future__ import annotations

from textgyms.envs.search.browser import Browser

__all__ = ["prompt", "information", "unavailable"]

_BROWSE = """\
You are a research agent on a web of pages (hosts wiki.example, news.example and forum.example; \
the search engine is search.example). Find the answer to the question by searching and reading \
pages; the pages may disagree, and wiki pages are the most reliable.

Question: {question}

Tools (a single tool call per reply, as a tag or as a JSON tool call such as \
{{"name": "search", "arguments": {{"query": "..."}}}}):
- search(query, page, site): <search>words to look for</search>; \
<search page="N" site="wiki.example">words</search> for further results pages or a single host.
- open(target, line): <open>https://wiki.example/wiki/Some_Page</open>, or <open>N</open> to \
follow the link or result numbered N on the current page; <open line="N">URL</open> scrolls.
- find(pattern): <find>text</find> lists the lines of the current page that contain it.
- back(): <back/> returns to the previous page.
{clarify}- answer(text, urls): <answer>your answer</answer> ends the episode. Give a single \
answer (a name or a number), not a list of candidates; answer "unknown" if you cannot find it."""

_CLARIFY = (
    "- clarify(question): <clarify>your question</clarify> asks the user what they meant, "
    "when the question is ambiguous.\n"
)

_R1 = """\
Answer the question below. Think as much as you like. To look something up, write \
<search>your query</search>: the top documents come back inside <information> and \
</information>. Search as often as you need. When you know the answer, write it inside \
<answer> and </answer>, with no explanation, e.g. <answer>your answer</answer>.
{clarify}Question: {question}"""


def prompt(question: str, search_only: bool, clarify: bool, k: int) -> str:
    """The task prompt (the question never contains the answer: see the generators)."""
    if search_only:
        extra = "If the question is ambiguous, ask with <clarify>your question</clarify>.\n"
        return _R1.format(question=question, k=k, clarify=extra if clarify else "")
    return _BROWSE.format(question=question, clarify=_CLARIFY if clarify else "")


def information(browser: Browser, query: str, words: int = 100) -> str:
    """The Search-R1 observation: ``Doc i(Title: t) text`` for the top-k documents."""
    hits = browser.backend.search(query, browser.k, 0, None)
    docs = []
    for i, doc in enumerate(hits.doc_ids, 1):
        page = browser.world.pages[doc]
        lines = browser.world.text(doc).split("\n")
        body = " ".join(" ".join(lines[1:] if len(lines) > 1 else lines).split()[:words])
        docs.append(f"Doc {i}(Title: {page.title}) {body}")
    inner = "\n".join(docs) if docs else "No documents found."
    return f"\n\n<information>{inner}</information>\n\n"


def unavailable(status: int, retry_after: int) -> str:
    """The Search-R1 observation of a search that hit a transient 503/429 (noise >= 1)."""
    reason = "Service Unavailable" if status == 503 else "Too Many Requests"
    msg = f"Search failed: {status} {reason} (Retry-After: {retry_after}). Search again."
    return f"\n\n<information>{msg}</information>\n\n"
