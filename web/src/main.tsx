import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onSignedOut } from './api.ts';
import { JobPage } from './components/JobPage.tsx';
import { JobsList } from './components/JobsList.tsx';
import { Playground } from './components/Playground.tsx';
import { SchedulePage } from './components/SchedulePage.tsx';
import { SchedulesList } from './components/SchedulesList.tsx';
import { SignIn } from './components/SignIn.tsx';
import { useRoute } from './route.ts';
import { forgetKey, storedKey } from './session.ts';

function App() {
  const [signedIn, setSignedIn] = useState(() => storedKey() !== null);
  const [notice, setNotice] = useState<string | null>(null);
  const route = useRoute();
  useEffect(
    () =>
      onSignedOut(() => {
        setNotice('The API refused the key (revoked or unknown): sign in again.');
        setSignedIn(false);
      }),
    [],
  );
  if (!signedIn) return <SignIn notice={notice} onSignedIn={() => (setNotice(null), setSignedIn(true))} />;
  const signOut = () => {
    forgetKey();
    setSignedIn(false);
  };
  return (
    <>
      <header class="top">
        <strong>Forecasting service</strong>
        <nav>
          <a href="#/jobs" class={route.page === 'jobs' || route.page === 'job' ? 'active' : ''}>
            Jobs
          </a>
          <a href="#/schedules" class={route.page === 'schedules' || route.page === 'schedule' ? 'active' : ''}>
            Schedules
          </a>
          <a href="#/playground" class={route.page === 'playground' ? 'active' : ''}>
            Playground
          </a>
          <a href="/openapi" target="_blank" rel="noreferrer">
            API
          </a>
        </nav>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {route.page === 'jobs' && <JobsList />}
        {route.page === 'job' && <JobPage key={route.id} kind={route.kind} id={route.id} />}
        {route.page === 'schedules' && <SchedulesList />}
        {route.page === 'schedule' && <SchedulePage key={route.id} id={route.id} />}
        {route.page === 'playground' && <Playground />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
