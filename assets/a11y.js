// What Dash 4's own components say to screen readers, put right where their Python
// props cannot reach (dcc.RadioItems, dcc.Checklist, dcc.Slider and dcc.Dropdown take no
// aria props). One observer repairs every such component the moment React draws or
// redraws it, on every page, so no page has to remember to:
//
// - Radio buttons and check boxes: Dash wraps each native input in a label with
//   role="option" inside a role="listbox" (a list box of options that each hold a
//   focusable input, with no name). The native inputs already say everything (each is
//   named by its label; the group by the fieldset round it, app/widgets.py
//   choice_group), so the list box and option roles and aria-selected are removed.
// - Sliders: the thumb (role="slider") and the direct-input box have no name. They take
//   the name of the closest group that has one (role="group" with aria-label or
//   aria-labelledby, set in Python where the words are: app/widgets.py scrubber,
//   app/controls.py, app/pages/lab.py).
// - Dropdowns: the Tab stop is a hidden input (aria-hidden, for Safari, which skips
//   buttons in the Tab order by default) that passes focus on to the menu's button: a
//   screen reader's user would Tab onto something it is told does not exist. The
//   button itself becomes the Tab stop, as every other button of the app is. The open
//   menu is a nameless dialog holding the same list box of options with inputs: the
//   dialog is named by the button (what is chosen), the button says it opens a dialog,
//   and the list is plain radio buttons (check boxes for a multiple choice), as above.
(function () {
  "use strict";
  const CHOICES = ".dash-radioitems, .dash-checklist, .dash-dropdown-options";
  const GROUP = "[role='group'][aria-label], [role='group'][aria-labelledby]";
  const UNNAMED = ":not([aria-label]):not([aria-labelledby])";
  const SLIDER_PARTS = `[role='slider']${UNNAMED}, input.dash-range-slider-input${UNNAMED}`;

  function plainChoice(label) {
    if (label.hasAttribute("role")) label.removeAttribute("role");
    if (label.hasAttribute("aria-selected")) label.removeAttribute("aria-selected");
  }

  function named(el) {
    const group = el.closest(GROUP);
    if (!group) return;
    for (const attr of ["aria-labelledby", "aria-label"]) {
      if (group.hasAttribute(attr)) {
        el.setAttribute(attr, group.getAttribute(attr));
        return;
      }
    }
  }

  function dropdownTabStop(hidden) {
    if (hidden.getAttribute("tabindex") !== "-1") hidden.setAttribute("tabindex", "-1");
    const button = hidden.nextElementSibling;
    if (!button || !button.classList.contains("dash-dropdown")) return;
    if (button.getAttribute("tabindex") !== "0") button.setAttribute("tabindex", "0");
    // what it opens (namedMenu): a dialog, not a list box
    if (button.getAttribute("aria-haspopup") !== "dialog") {
      button.setAttribute("aria-haspopup", "dialog");
    }
  }

  function namedMenu(dialog) {
    const wrapper = dialog.closest(".dash-dropdown-wrapper");
    const button = wrapper && wrapper.querySelector(":scope > button.dash-dropdown");
    if (!button) return;
    if (button.id && !/\s/.test(button.id)) dialog.setAttribute("aria-labelledby", button.id);
    else dialog.setAttribute("aria-label", button.textContent.trim());
  }

  function repair(root) {
    root.querySelectorAll(CHOICES).forEach((list) => {
      if (list.getAttribute("role") === "listbox") list.removeAttribute("role");
      list.querySelectorAll("label.dash-options-list-option").forEach(plainChoice);
    });
    root.querySelectorAll(SLIDER_PARTS).forEach(named);
    root.querySelectorAll(".dash-dropdown-focus-target").forEach(dropdownTabStop);
    root.querySelectorAll(`.dash-dropdown-content[role='dialog']${UNNAMED}`)
      .forEach(namedMenu);
  }

  // React sets aria-selected again when the choice changes, and the dropdown puts the
  // hidden input back in the Tab order when its button loses focus: both undone here.
  function onAttribute(el, name) {
    if (name === "aria-selected" && el.matches("label.dash-options-list-option") &&
        el.closest(CHOICES)) {
      plainChoice(el);
    } else if (name === "tabindex" && el.classList.contains("dash-dropdown-focus-target")) {
      dropdownTabStop(el);
    }
  }

  let pending = false;
  const observer = new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === "attributes") onAttribute(r.target, r.attributeName);
      // new nodes (not Plotly's own redraws, which add many and none of these)
      else if (!pending && r.addedNodes.length && !(r.target.closest &&
               r.target.closest(".js-plotly-plot"))) {
        pending = true;
      }
    }
    if (pending) {
      pending = false;
      repair(document);
    }
  });

  function start() {
    repair(document);
    observer.observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ["aria-selected", "tabindex"],
    });
  }
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
