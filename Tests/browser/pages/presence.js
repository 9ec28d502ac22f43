// presence.html?room=R lists the members of room R (data-lb-each over presence-R.members);
// &name=N also joins it with {"name": N} through data-lb-presence on #here. Runs before livebind.js.
const params = new URLSearchParams(location.search);
const room = params.get('room');
document.getElementById('members').setAttribute('data-lb-each', `presence-${room}.members`);
if (params.has('name')) {
  const here = document.getElementById('here');
  here.setAttribute('data-lb-presence-meta', JSON.stringify({ name: params.get('name') }));
  here.setAttribute('data-lb-presence', room);
}
