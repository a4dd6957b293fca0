"""How rec11_book.extensions.slides reads a written page into slides."""

from rec11.notes import Note
from rec11_book.extensions.slides import page_slides
from rec11_book.shared.pages import deck_uri, slide_id

NOTES = (Note("First", 5, "attention", "book/page", 30), Note("Second", 2, "close", "book/page", 40))

PAGE = """<html><body><article>
<h1 id="top">Page<a class="headerlink" href="#top">#</a></h1>
<p>Prose that stays on the page.</p>
<p class="rec11-slide" id="a">The point, with <a href="other.html#x">a link</a>.</p>
<div class="cell tag_slide docutils container">
  <div class="cell_input"><pre>x = 1</pre></div>
  <div class="cell_output"><pre>1</pre></div>
</div>
<div class="cell tag_hide-input tag_slide docutils container">
  <details><div class="cell_input"><pre>plot()</pre></div></details>
  <div class="cell_output"><figure id="fig"><img alt="A line that rises." src="../_images/f.png"/>
  <figcaption><p><span class="caption-number">Fig. 1 </span>A line.</p></figcaption></figure></div>
</div>
<div class="instructor-note dropdown admonition">
  <p class="admonition-title">Instructor notes · 5 min · First</p>
  <p>Say <code>x</code> <em>once</em>.</p>
</div>
<table class="rec11-slide"><tr><td>second</td></tr></table>
<div class="instructor-note dropdown admonition">
  <p class="admonition-title">Instructor notes · 2 min · Second</p><p>Short.</p>
</div>
</article></body></html>"""


def test_each_note_closes_a_slide_of_what_was_marked_before_it():
    first, second = page_slides("book/page", PAGE, NOTES)
    assert (first.title, first.minutes, second.title) == ("First", 5, "Second")
    assert [str(e) for e in first.content][1] == '<div class="cell_input"><pre>x = 1</pre></div>'
    assert "Prose that stays" not in "".join(map(str, first.content))
    assert [e.name for e in second.content] == ["table"]
    assert str(first.notes[0]) == "<p>Say <code>x</code> <em>once</em>.</p>"


def test_copies_point_at_the_same_files_from_the_deck_and_repeat_no_ids():
    first, _ = page_slides("book/sub/page", PAGE, NOTES)
    point, figure = first.content[0], first.figures[0]
    assert point.a["href"] == "../book/sub/other.html#x" and not point.get("id")
    assert figure.img["src"] == "../book/_images/f.png" and figure.img["alt"] == "A line that rises."
    assert not figure.get("id") and "Fig. 1" not in figure.get_text()


def test_links_to_a_slide_are_relative_to_the_page():
    assert deck_uri("book/page", "Q, K, V") == "../slides/index.html#/" + slide_id("Q, K, V")
    assert deck_uri("book/sub/x", "Q, K, V").startswith("../../slides/index.html#/slide-q-k-v")


EXPLORABLE = """<html><body><article>
<div class="cell tag_hide-input tag_slide docutils container">
  <div class="cell_output"><figure id="fig">
  <div class="rec11-explore" id="rec11-explore-1">
  <img alt="Frame two." src="../_images/b.png"/>
  <div class="rec11-explore-control rec11-explore-waiting"><label for="rec11-explore-1-input">T</label>
  <input type="range" id="rec11-explore-1-input" min="0" max="2" value="1"/><output>T = 1</output></div>
  <p class="rec11-explore-live" aria-live="polite"></p>
  <p class="rec11-explore-print">Online, a slider shows this figure for each t: 3 settings.</p>
  <script type="application/json" class="rec11-explore-frames">[{"src": "../_images/a.png"}]</script>
  </div>
  <figcaption><p>A figure to explore.</p></figcaption></figure></div>
</div>
<div class="instructor-note dropdown admonition">
  <p class="admonition-title">Instructor notes · 5 min · First</p><p>Say it.</p>
</div>
</article></body></html>"""


def test_an_explorable_figure_is_its_default_frame_on_a_slide():
    (slide,) = page_slides("book/page", EXPLORABLE, NOTES[:1])
    (figure,) = slide.figures
    assert [img["src"] for img in figure.find_all("img")] == ["../_images/b.png"]
    assert figure.img["alt"] == "Frame two." and "A figure to explore." in figure.get_text()
    assert not figure.select("input, output, script, .rec11-explore-live, .rec11-explore-print")
